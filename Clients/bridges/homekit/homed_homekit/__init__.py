"""homed's accessories in Apple's Home app: a HAP bridge on HAP-python (README.md).

Pure modules (no I/O): ``hapmodel`` (homed's model as HAP's), ``ids`` (stable
aid/iid), ``exposure`` (which accessories are shown), ``setupcode`` (setup code,
X-HM:// URI). I/O: ``state`` (the state directory), ``hap`` (HAP-python glue),
``service`` (following homed).
"""
