"""The sysfs provider's tests: a real homed (Clients/python/tests/homed_testkit.py)
and the provider run as a real process against a fake sysfs tree."""


from homed_testkit.fixtures import homed, processes, workdir  # noqa: F401
