"""The sysfs provider's tests: a real homed (homed_testkit, Clients/python/testkit)
and the provider run as a real process against a fake sysfs tree."""


from homed_testkit.fixtures import homed, processes, workdir  # noqa: F401
