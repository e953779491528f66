"""One registry style for every family of interchangeable implementations, and plug-ins.

A :class:`Registry` holds the built-in implementations of one protocol (fit tests,
packing algorithms, packing constraints, placement policies, optimisers,
dispersion tests) by the name config uses, read from a class attribute (``estimator``
for fit tests, ``kind`` for placement policies, ``name`` elsewhere). Classes join with
the :meth:`Registry.register` decorator. Config may also name a class from outside
the package as ``module:Class`` (a *plug-in*): :meth:`Registry.resolve` imports it and
checks it against the protocol (every attribute and method, with compatible
signatures), so a misfit fails at start-up with the config key in the message.

Every implementation is built the same way, by :meth:`Registry.build`. A class
declares the settings it takes in its ``options`` class attribute, mapping a config
key (e.g. ``beta_threshold``) to its constructor argument (``threshold``); ``"**"``
as the argument spreads a mapping-valued setting into keyword arguments. Options
given with a plug-in in config (its own arguments) are passed as they are.
"""

from __future__ import annotations

import importlib
import inspect
import re
from collections.abc import Iterator, Mapping
from typing import Any, Generic, TypeVar

__all__ = ["ConfigError", "Registry", "PLUGIN_PATTERN", "protocol_problems", "load_plugin"]

T = TypeVar("T")

#: A plug-in spec: ``package.module:Class``.
PLUGIN_PATTERN = r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$"


class ConfigError(ValueError):
    """A config value that cannot work; the message starts with its key."""


def is_plugin(spec: str) -> bool:
    return isinstance(spec, str) and re.match(PLUGIN_PATTERN, spec) is not None


def load_plugin(spec: str, key: str) -> type:
    """The class named by ``module:Class``; a :class:`ConfigError` naming ``key`` if it can't be imported."""
    if not is_plugin(spec):
        raise ConfigError(f"{key}: {spec!r} is not of the form module:Class")
    module_name, _, class_name = spec.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(
            f"{key}: cannot import module {module_name!r} of plug-in {spec!r} ({exc}); "
            "install it or put its directory on PYTHONPATH"
        ) from None
    cls = getattr(module, class_name, None)
    if not inspect.isclass(cls):
        raise ConfigError(f"{key}: module {module_name!r} has no class {class_name!r}")
    return cls


def _protocol_members(protocol: type) -> dict[str, Any]:
    """Attributes and methods a protocol declares (its own and its protocol bases')."""
    members: dict[str, Any] = {}
    for base in reversed(protocol.__mro__):
        if base is object or base.__name__ in ("Protocol", "Generic"):
            continue
        for name in getattr(base, "__annotations__", {}):
            members.setdefault(name, None)
        for name, value in vars(base).items():
            if not name.startswith("_") and (callable(value) or isinstance(value, (property, classmethod, staticmethod))):
                members[name] = value
    return members


def _parameters(fn: Any) -> list[inspect.Parameter]:
    fn = fn.__func__ if isinstance(fn, (classmethod, staticmethod)) else fn
    params = list(inspect.signature(fn).parameters.values())
    return params[1:] if params and params[0].name in ("self", "cls") else params


def _accepts(cls: type, name: str, spec: Any) -> bool:
    """Whether ``cls.name`` can be called as the protocol's ``spec`` is: every parameter by position or keyword."""
    static = inspect.getattr_static(cls, name)
    try:
        wanted = _parameters(spec)
        sig = inspect.signature(getattr(cls, name))
    except (TypeError, ValueError):
        return True  # builtins without signatures: nothing to compare
    if inspect.isfunction(static):  # a plain method looked up on the class: drop self
        sig = sig.replace(parameters=list(sig.parameters.values())[1:])
    args = [object() for p in wanted if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty]
    kwargs = {p.name: object() for p in wanted if p.kind is p.KEYWORD_ONLY and p.default is p.empty}
    try:
        sig.bind(*args, **kwargs)
    except TypeError:
        return False
    optional = [p for p in wanted if p.default is not p.empty and p.kind is not p.VAR_KEYWORD]
    accepted = sig.parameters
    has_var_kw = any(p.kind is p.VAR_KEYWORD for p in accepted.values())
    return all(p.name in accepted or has_var_kw for p in optional)


def protocol_problems(cls: type, protocol: type) -> list[str]:
    """What ``cls`` lacks to implement ``protocol``: missing attributes and methods with incompatible signatures.

    Stricter than ``isinstance`` on a runtime-checkable protocol, which checks only that the names exist.
    """
    problems = []
    for name, spec in _protocol_members(protocol).items():
        if not hasattr(cls, name) and name not in getattr(cls, "__dataclass_fields__", {}) and name not in getattr(
            cls, "__annotations__", {}
        ):
            problems.append(f"no attribute {name!r}" if spec is None or isinstance(spec, property) else f"no method {name}()")
            continue
        if spec is None or isinstance(spec, property):
            continue
        impl = getattr(cls, name)
        if not callable(impl):
            problems.append(f"{name} is not callable")
        elif not _accepts(cls, name, spec):
            want = ", ".join(p.name for p in _parameters(spec))
            problems.append(f"{name}() does not accept the protocol's arguments ({want})")
    return problems


class Registry(Generic[T]):
    """Named implementations of one protocol; see the module docstring.

    ``kind`` names the family in messages ("fit test"), ``protocol`` is the class every member is
    checked against, and ``key`` is the class attribute holding a member's config name.
    """

    def __init__(self, kind: str, protocol: type, key: str = "name") -> None:
        self.kind, self.protocol, self.key = kind, protocol, key
        self._members: dict[str, type] = {}

    def register(self, cls: type) -> type:
        """Class decorator: add ``cls`` under its config name (checked against the protocol)."""
        name = getattr(cls, self.key)
        problems = protocol_problems(cls, self.protocol)
        if problems:
            raise TypeError(f"{cls.__name__} is not a {self.kind}: {'; '.join(problems)}")
        if name in self._members:
            raise TypeError(f"{self.kind} {name!r} is registered twice")
        self._members[name] = cls
        return cls

    def __iter__(self) -> Iterator[str]:
        return iter(self._members)

    def __len__(self) -> int:
        return len(self._members)

    def __contains__(self, name: object) -> bool:
        return name in self._members

    def __getitem__(self, name: str) -> type:
        return self.resolve(name, self.kind)

    def names(self) -> tuple[str, ...]:
        """The built-in names, in registration order."""
        return tuple(self._members)

    def classes(self) -> tuple[type, ...]:
        """The built-in classes, in registration order."""
        return tuple(self._members.values())

    def defaults(self) -> tuple[T, ...]:
        """One instance of each built-in class with its default arguments, in registration order."""
        return tuple(cls() for cls in self._members.values())

    def options(self) -> tuple[str, ...]:
        """Every config key a built-in member declares in ``options``, sorted."""
        return tuple(sorted({k for cls in self._members.values() for k in getattr(cls, "options", {})}))

    def resolve(self, spec: str, key: str) -> type:
        """The class of a built-in name or a ``module:Class`` plug-in; errors name the config ``key``."""
        if spec in self._members:
            return self._members[spec]
        if not is_plugin(spec):
            raise ConfigError(f"{key}: unknown {self.kind} {spec!r}; known: {', '.join(map(str, self._members))}, or a plug-in module:Class")
        cls = load_plugin(spec, key)
        problems = protocol_problems(cls, self.protocol)
        if problems:
            raise ConfigError(f"{key}: {spec} is not a {self.kind}: {'; '.join(problems)}")
        return cls

    def build(self, spec: str, *args: Any, key: str, settings: Mapping[str, Any] | None = None,
              own: Mapping[str, Any] | None = None) -> T:
        """An instance of ``spec``: positional ``args``, the ``settings`` its class declares, and its ``own`` options."""
        cls = self.resolve(spec, key)
        kwargs = dict(own or {})
        for config_key, arg in getattr(cls, "options", {}).items():
            if not settings or config_key not in settings:
                continue
            if arg == "**":
                kwargs.update(settings[config_key] or {})
            else:
                kwargs.setdefault(arg, settings[config_key])
        try:
            inspect.signature(cls).bind(*args, **kwargs)
        except TypeError as exc:
            raise ConfigError(f"{key}: {spec} cannot be built with {sorted(kwargs)}: {exc}") from None
        return cls(*args, **kwargs)
