"""What every probe stands on: the backend under test, interface variants,
and registering one for the duration of a probe.

A probe never asks the backend's own interface what the answer is: it
registers a variant that says one thing, checks what torch answers, registers
one that says the opposite, and checks again. Only a torch that asks the
registry passes both.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import torch

from rfc_shared.testing.registry import RegistrySnapshot, clear_derived_caches


class ProbeFailure(AssertionError):
    """The site does not behave as the RFC asks; the message is the evidence."""


class NotApplicable(Exception):
    """The probe does not apply to this backend (it lacks the API the site
    is about); the message says what is missing."""


def runtime(attribute: str) -> Any:
    """``torch.<backend>.<attribute>``, or "not applicable" when the backend's
    runtime module has no such function or class (not every backend has
    streams, events, ``synchronize`` or device properties)."""
    value = getattr(subject().module, attribute, None)
    if value is None:
        raise NotApplicable(f"torch.{subject().name} has no {attribute}")
    return value


def check(condition: object, evidence: str) -> None:
    if not condition:
        raise ProbeFailure(evidence)


@dataclass(frozen=True)
class Subject:
    """The PrivateUse1 backend under test."""

    name: str
    module: ModuleType

    @property
    def device(self) -> torch.device:
        return torch.device(self.name, 0)


@functools.cache
def subject() -> Subject:
    from rfc_shared.testing.backends import ensure_privateuse1_backend

    name = ensure_privateuse1_backend()
    module = getattr(torch, name, None)
    if module is None:
        raise RuntimeError(f"the PrivateUse1 backend {name!r} registered no torch.{name} module")
    return Subject(name, module)


def registry() -> ModuleType:
    """``torch._dynamo.device_interface``, as the torch in use serves it."""
    return importlib.import_module("torch._dynamo.device_interface")


def require(module: object, attribute: str, where: str) -> Any:
    """``module.attribute``, or a probe failure saying it does not exist."""
    value = getattr(module, attribute, None)
    check(value is not None, f"{where}.{attribute} does not exist")
    return value


def ask_each(question: Callable[[], object], **cases: type) -> dict[str, object]:
    """What ``question()`` returns with each interface registered in turn."""
    found = {}
    for label, interface in cases.items():
        with isolated():
            register(interface)
            found[label] = question()
    return found


@functools.cache
def base_interface() -> type:
    """The backend's DeviceInterface: the one registered when first asked, or
    else the one its package provides by convention
    (``torch_<name>._dynamo.device_interface``), made a subclass of Dynamo's
    DeviceInterface. Remembered, so that variants registered later never
    become the base of other variants."""
    interfaces = registry()
    name = subject().name
    found = dict(interfaces.get_registered_device_interfaces()).get(name)
    if found is not None:
        return found
    convention = importlib.import_module(f"torch_{name}._dynamo.device_interface")
    duck = convention.DeviceInterface
    if isinstance(duck, type) and issubclass(duck, interfaces.DeviceInterface):
        return duck
    return _adapted(duck)


@functools.cache
def _adapted(duck: type) -> type:
    return type(duck.__name__, (duck, registry().DeviceInterface), {"__module__": __name__})


def variant(**overrides: Any) -> type:
    """A subclass of the backend's interface with ``overrides`` (values that
    are plain functions become staticmethods)."""
    namespace = {
        key: staticmethod(value) if callable(value) and not isinstance(value, type) else value
        for key, value in overrides.items()
    }
    return type("ProbeVariant", (base_interface(),), {"__module__": __name__, **namespace})


def register(interface: type) -> None:
    """Registers ``interface`` for the backend through the best entry the
    torch in use has, replacing what the backend registered."""
    interfaces = registry()
    name = subject().name
    interfaces.get_registered_device_interfaces()
    for key in [k for k in interfaces.device_interfaces if k.split(":")[0] == name]:
        del interfaces.device_interfaces[key]
    if hasattr(interfaces, "register_interface_for_device_PrivateUse1"):
        interfaces.register_interface_for_device_PrivateUse1(name, interface)
    else:
        for key in [name, *(f"{name}:{i}" for i in range(subject().module.device_count()))]:
            interfaces.register_interface_for_device(key, interface)


@contextlib.contextmanager
def isolated() -> Iterator[None]:
    """Leave the registries and derived caches as they were."""
    registry()
    snapshot = RegistrySnapshot.take()
    try:
        yield
    finally:
        snapshot.restore()
        clear_derived_caches()
