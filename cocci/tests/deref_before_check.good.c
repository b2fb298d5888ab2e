// Fixture: checked first, then used.
int setup(struct bus *bus, struct desc *desc)
{
	struct region *r;

	r = region_create(bus, desc);
	if (!r)
		return -ENXIO;
	r->provider_data = desc->owner;
	return 0;
}
