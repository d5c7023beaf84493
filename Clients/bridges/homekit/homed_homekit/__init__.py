"""homed's accessories in Apple's Home app: a HAP bridge on HAP-python (README.md).

Pure modules (no I/O): ``hapmodel`` (homed's model as HAP's), ``ids`` (stable
aid/iid), ``exposure`` (which accessories are shown), ``setupcode`` (setup code,
X-HM:// URI). On HAP-python: ``accessories``, ``driver``, ``hapsrp``, ``bridge``.
I/O: ``state`` (the state directory), ``service`` (following homed).
"""
