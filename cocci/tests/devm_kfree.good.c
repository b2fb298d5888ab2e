// Fixture: devm memory left to the driver core; kmalloc memory kfree()d.
struct state { int x; };

int thing_probe(struct thing *t)
{
	struct state *st;

	t->priv = st = devm_kzalloc(&t->dev, sizeof(*st), GFP_KERNEL);
	if (!st)
		return -ENOMEM;
	t->buf = kmalloc(64, GFP_KERNEL);
	return 0;
}

void thing_remove(struct thing *t)
{
	kfree(t->buf);
}
