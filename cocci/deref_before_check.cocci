// SPDX-License-Identifier: GPL-2.0
/// A pointer dereferenced and only then checked for NULL: either the check
/// is dead or the dereference can oops. v3's virtio-pmem probe set
/// nd_region->provider_data before testing nd_region.
//
// Confidence: High
// Options: --no-includes --include-headers

virtual report

@r depends on report exists@
expression E, V, V2, V3;
identifier fld;
position p1, p2;
@@
 E = V;
 ... when != E = V2
(
 E@p1->fld = ...
|
 E@p1->fld
)
 ... when != E = V3
(
 !E@p2
|
 E@p2 == NULL
|
 IS_ERR_OR_NULL(E@p2)
)

@script:python depends on report@
p1 << r.p1;
p2 << r.p2;
@@
coccilib.report.print_report(p1[0], "dereference before the NULL check on line %s" % p2[0].line)
