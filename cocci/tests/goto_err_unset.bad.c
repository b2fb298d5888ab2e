// Fixture: the bus registration fails but the function returns 0.
int probe(struct dev *d)
{
	struct bus *bus;
	int err;

	err = init_queue(d);
	if (err)
		goto out;
	bus = bus_register(d);
	if (!bus)
		goto out_queue;
	return 0;
out_queue:
	del_queue(d);
out:
	return err;
}
