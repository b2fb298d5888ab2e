// SPDX-License-Identifier: GPL-2.0
/// Memory from devm_kzalloc() and friends is freed by the driver core when
/// the device is unbound; a kfree() of it is a double free. The pointer is
/// often stored in a field (vdev->priv, dev_set_drvdata) at probe and read
/// back in remove, as v3's virtio-pmem did: both paths are checked.
//
// Confidence: High
// Options: --no-includes --include-headers

virtual report

@alloc_field@
expression D, E, V, S, F;
identifier fld;
@@
(
 E->fld = devm_kzalloc(D, S, F)
|
 E->fld = V = devm_kzalloc(D, S, F)
|
 E->fld = devm_kmalloc(D, S, F)
)

@free_field depends on report@
identifier alloc_field.fld;
expression E, V, E2;
position p;
@@
(
 V = E->fld;
 ... when != V = E2
 kfree@p(V);
|
 kfree@p(E->fld);
)

@free_field_decl depends on report@
identifier alloc_field.fld, V;
expression E, E2;
type T;
position p;
@@
 T V = E->fld;
 ... when != V = E2
 kfree@p(V);

@script:python depends on report@
p << free_field_decl.p;
fld << alloc_field.fld;
@@
coccilib.report.print_report(p[0], "kfree() of devm-allocated memory (from ->%s): double free at unbind" % fld)

@script:python depends on report@
p << free_field.p;
fld << alloc_field.fld;
@@
coccilib.report.print_report(p[0], "kfree() of devm-allocated memory (from ->%s): double free at unbind" % fld)

@free_local depends on report@
expression D, S, F, V, E2;
position p;
@@
 V = \(devm_kzalloc\|devm_kmalloc\|devm_kcalloc\)(D, S, F, ...)
 ... when != V = E2
 kfree@p(V);

@script:python depends on report@
p << free_local.p;
@@
coccilib.report.print_report(p[0], "kfree() of devm-allocated memory: double free at unbind")
