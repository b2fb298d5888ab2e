// SPDX-License-Identifier: GPL-2.0
/// After 'err = f(); if (err) goto ...;' has passed, err is 0. A later
/// failure that jumps to an error label without setting err makes the
/// function return success from its error path, as v3's virtio-pmem probe
/// did when nvdimm_bus_register() failed. Labels that set err themselves
/// are not reported.
//
// Confidence: Moderate
// Options: --no-includes --include-headers

virtual report

@setting_label@
identifier lbl, err;
expression E;
@@
lbl:
 err = E;

@r depends on report exists@
identifier err, lbl, f;
expression X, Y;
statement S;
position p;
@@
 err = f(...);
 if (err) S
 ... when != err = Y
(
 if (!X) goto lbl@p;
|
 if (X == NULL) goto lbl@p;
|
 if (IS_ERR(X)) goto lbl@p;
)

@script:python depends on report@
p << r.p;
lbl << r.lbl;
err << r.err;
set_lbl << setting_label.lbl = "";
set_err << setting_label.err = "";
@@
if not (lbl == set_lbl and err == set_err):
    coccilib.report.print_report(p[0], "goto %s on failure with %s still 0 from the last check" % (lbl, err))
