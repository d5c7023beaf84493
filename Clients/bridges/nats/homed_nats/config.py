"""homed-nats's settings: defaults, then an INI file, then flags (flags win).
No I/O but reading the files named (the config file, the credentials file).

    [nats]
    servers = nats://127.0.0.1:4222, nats://10.0.0.2:4222
    credentials = /etc/homed/homed-nats.creds      ; a NATS .creds file (JWT + nkey seed), or
    user_file = /etc/homed/homed-nats.user         ; username=… and password=… lines
    site = home                                     ; this homed's name on NATS: a subject token
    replicas = 1                                    ; the stream's and bucket's replicas (3 on a cluster)
    window = 1024                                   ; records published and not yet acknowledged, at most

    [roles]
    ; NATS callers of homed.<site>.write.<home> come from other accounts that import
    ; the service with `share: true`, so the server tells the bridge their account
    ; and user. ACCOUNT/USER or ACCOUNT/* = viewer | user | admin | none.
    REMOTE/alice = user
    REMOTE/* = viewer
"""

from __future__ import annotations

import configparser
import re
from typing import Dict, List, Optional

from homed.broker import read_credentials

from .layout import Names

__all__ = ["Settings", "load", "SettingsError", "ROLES", "role_for"]

ROLES = ("none", "viewer", "user", "admin")


class SettingsError(ValueError):
    pass


class Settings:
    def __init__(self, servers: Optional[List[str]] = None, site: str = "home", prefix: str = "homed",
                 replicas: int = 1, creds_file: Optional[str] = None, username: Optional[str] = None,
                 password: Optional[str] = None, socket_path: Optional[str] = None,
                 roles: Optional[Dict[str, str]] = None, batch: int = 256, window: int = 1024):
        self.servers = servers or ["nats://127.0.0.1:4222"]
        try:
            self.names = Names(site, prefix)
        except ValueError as error:
            raise SettingsError(str(error)) from None
        if not 1 <= replicas <= 5:
            raise SettingsError(f"replicas {replicas}: JetStream takes 1 to 5")
        self.replicas = replicas
        self.creds_file, self.username, self.password = creds_file, username, password
        self.socket_path = socket_path
        self.roles = {}
        for who, role in (roles or {}).items():
            role = role.strip().lower()
            if role not in ROLES:
                raise SettingsError(f"[roles] {who} = {role!r}: a role is one of {', '.join(ROLES)}")
            if "/" not in who:
                raise SettingsError(f"[roles] {who!r}: name a caller as ACCOUNT/USER or ACCOUNT/*")
            self.roles[who] = role
        self.batch = batch
        # How many records may be on their way to the stream unacknowledged: the
        # bound on what the bridge holds for the server (and on what a failure
        # sends again), and on how far ahead of the stream it runs.
        if not 1 <= window <= 65536:
            raise SettingsError(f"window {window}: a number of records from 1 to 65536")
        self.window = window


def role_for(roles: Dict[str, str], account: Optional[str], user: Optional[str]) -> str:
    """The homed role of a NATS caller: ACCOUNT/USER, else ACCOUNT/*, else none."""
    if not account:
        return "none"
    if user and f"{account}/{user}" in roles:
        return roles[f"{account}/{user}"]
    return roles.get(f"{account}/*", "none")


def load(config_path: Optional[str] = None, flags: Optional[dict] = None) -> Settings:
    """Settings from the file (if any) with the flags given (not None) on top.
    Raises SettingsError naming the file, section and key that is wrong."""
    values: dict = {}
    roles: Dict[str, str] = {}
    if config_path:
        # Keys are case-sensitive: NATS account and user names are.
        parser = configparser.ConfigParser(inline_comment_prefixes=(";", "#"), delimiters=("=",))
        parser.optionxform = str
        try:
            with open(config_path, "r") as f:
                parser.read_file(f)
        except OSError as error:
            raise SettingsError(f"config file {config_path}: {error.strerror or error}") from None
        except configparser.Error as error:
            raise SettingsError(f"config file {config_path}: {error}") from None
        known = ("servers", "credentials", "user_file", "site", "prefix", "replicas", "socket", "window")
        for section in parser.sections():
            if section == "roles":
                roles.update({k: v for k, v in parser.items(section)})
                continue
            if section != "nats":
                raise SettingsError(f"config file {config_path}: unknown section [{section}] (known: [nats], [roles])")
            for key, value in parser.items(section):
                if key not in known:
                    raise SettingsError(f"config file {config_path}: [nats] has no key {key!r} "
                                        f"(known: {', '.join(known)})")
                values[key] = value.strip()
    for key, value in (flags or {}).items():
        if value is not None:
            values[key] = value
    servers = values.pop("servers", None)
    if isinstance(servers, str):
        servers = [s.strip() for s in servers.replace("\n", ",").split(",") if s.strip()]
    for server in servers or ():
        if "@" in server.split("//", 1)[-1]:
            shown = re.sub(r"//[^@/]*@", lambda m: "//" + m.group(0)[2:].split(":")[0] + ":***@", server)
            raise SettingsError(f"server {shown}: credentials come from a file (--user-file or --creds), "
                                f"never from the command line or a URL")
    username = password = None
    user_file = values.pop("user_file", None)
    if user_file:
        try:
            username, password = read_credentials(user_file)
        except OSError as error:
            raise SettingsError(f"user file {user_file}: {error.strerror or error}") from None
        except ValueError as error:
            raise SettingsError(f"user file {user_file}: {error}") from None
    creds = values.pop("credentials", None)
    if creds:
        try:
            with open(creds, "r") as f:
                if "NATS USER JWT" not in f.read():
                    raise SettingsError(f"credentials file {creds}: not a NATS .creds file (no user JWT in it)")
        except OSError as error:
            raise SettingsError(f"credentials file {creds}: {error.strerror or error}") from None
    try:
        replicas = int(values.pop("replicas", 1))
    except ValueError:
        raise SettingsError("replicas: a number from 1 to 5") from None
    try:
        window = int(values.pop("window", 1024))
    except ValueError:
        raise SettingsError("window: a number of records from 1 to 65536") from None
    return Settings(servers=servers, site=values.pop("site", "home"), prefix=values.pop("prefix", "homed"),
                    replicas=replicas, creds_file=creds, username=username, password=password,
                    socket_path=values.pop("socket", None), roles=roles, window=window)
