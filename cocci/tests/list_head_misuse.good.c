// Fixture: the same list used correctly.
struct item { struct list_head node; int v; };
struct pool { struct list_head waiting; };

void pool_put(struct pool *pool, struct item *it)
{
	list_add_tail(&it->node, &pool->waiting);
}

struct item *pool_get(struct pool *pool)
{
	struct item *it;

	it = list_first_entry(&pool->waiting, struct item, node);
	list_del(&it->node);
	return it;
}
