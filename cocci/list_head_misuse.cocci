// SPDX-License-Identifier: GPL-2.0
/// A field used as a list head (list_first_entry*, list_for_each_entry*)
/// must not be passed where an entry belongs: deleting
/// it with list_del() unlinks the whole list, and passing it as the first
/// argument of list_add()/list_add_tail() has the arguments swapped.
/// v3's virtio-pmem host_ack() and virtio_pmem_flush() did both.
//
// Confidence: Moderate (the same field name may be a head in one struct
// and an entry in another)
// Options: --no-includes --include-headers

virtual report

@heads@
identifier fld;
expression X, E, P, N;
type T;
identifier M;
iterator name list_for_each_entry, list_for_each_entry_safe;
statement S;
@@
(
 E = list_first_entry(&X->fld, T, M);
|
 E = list_first_entry_or_null(&X->fld, T, M);
|
 list_for_each_entry(P, &X->fld, M) S
|
 list_for_each_entry_safe(P, N, &X->fld, M) S
)

@del depends on report@
identifier heads.fld;
expression X;
position p;
@@
(
 list_del@p(&X->fld)
|
 list_del_init@p(&X->fld)
)

@script:python depends on report@
p << del.p;
fld << heads.fld;
@@
coccilib.report.print_report(p[0], "list_del() of list head '%s': delete the entry, not the head" % fld)

@add depends on report@
identifier heads.fld;
expression X, Y;
position p;
@@
(
 list_add_tail@p(&X->fld, Y)
|
 list_add@p(&X->fld, Y)
)

@script:python depends on report@
p << add.p;
fld << heads.fld;
@@
coccilib.report.print_report(p[0], "list head '%s' passed as the new entry: list_add arguments swapped?" % fld)
