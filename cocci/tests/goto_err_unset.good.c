// Fixture: every failure sets err, or jumps to a label that does.
int probe(struct dev *d)
{
	struct bus *bus;
	struct region *r;
	int err;

	err = init_queue(d);
	if (err)
		goto out;
	bus = bus_register(d);
	if (!bus) {
		err = -ENXIO;
		goto out_queue;
	}
	r = region_create(bus);
	if (!r)
		goto out_bus;
	return 0;
out_bus:
	err = -ENXIO;
	bus_unregister(bus);
out_queue:
	del_queue(d);
out:
	return err;
}
