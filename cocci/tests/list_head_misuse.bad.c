// Fixture: the v3 mistakes, a list head deleted and passed as the entry.
struct item { struct list_head node; int v; };
struct pool { struct list_head waiting; };

void pool_put(struct pool *pool, struct item *it)
{
	list_add_tail(&pool->waiting, &it->node);
}

struct item *pool_get(struct pool *pool)
{
	struct item *it;

	it = list_first_entry(&pool->waiting, struct item, node);
	list_del(&pool->waiting);
	return it;
}
