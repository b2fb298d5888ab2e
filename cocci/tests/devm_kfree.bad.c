// Fixture: devm memory kept in priv at probe and kfree()d at remove.
struct state { int x; };

int thing_probe(struct thing *t)
{
	struct state *st;

	t->priv = st = devm_kzalloc(&t->dev, sizeof(*st), GFP_KERNEL);
	if (!st)
		return -ENOMEM;
	return 0;
}

void thing_remove(struct thing *t)
{
	struct state *st = t->priv;

	kfree(st);
}
