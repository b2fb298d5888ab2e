// Fixture: the region is used before it is checked.
int setup(struct bus *bus, struct desc *desc)
{
	struct region *r;

	r = region_create(bus, desc);
	r->provider_data = desc->owner;
	if (!r)
		return -ENXIO;
	return 0;
}
