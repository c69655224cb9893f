"""Conformance probes of slice ``registry_core``."""

from __future__ import annotations

from rfc_shared.conformance.harness import (
    ProbeFailure,
    base_interface,
    check,
    isolated,
    register,
    registry,
    require,
    subject,
    variant,
)
from rfc_shared.conformance.probes import probe


@probe("registry_core.register_privateuse1", "PrivateUse1 entry: validates, never clobbers")
def _register_privateuse1() -> str:
    interfaces = registry()
    entry = require(interfaces, "register_interface_for_device_PrivateUse1", "device_interface")
    name = subject().name
    with isolated():
        register(base_interface())
        before = dict(interfaces.device_interfaces)
        try:
            entry("cuda", base_interface())
        except ValueError:
            pass
        else:
            raise ProbeFailure("registering under 'cuda' was accepted")
        check(interfaces.device_interfaces == before, "a refused registration changed the registry")
        other = variant()
        try:
            entry(name, other)
        except RuntimeError:
            pass
        else:
            raise ProbeFailure(f"a second interface replaced the registered one for {name!r}")
        check(
            interfaces.get_interface_for_device(name) is base_interface(),
            f"the interface registered for {name!r} changed",
        )
    return (
        f"registers {name}; refuses 'cuda' and a second interface, leaving the registry as it was"
    )


@probe("registry_core.indexed_lookup", "get_interface_for_device resolves indexed names")
def _indexed_lookup() -> str:
    interfaces = registry()
    name = subject().name
    with isolated():
        interface = variant()
        register(interface)
        far = f"{name}:7"
        try:
            found = interfaces.get_interface_for_device(far)
        except NotImplementedError as e:
            raise ProbeFailure(f"get_interface_for_device({far!r}) raised: {e}") from e
        check(found is interface, f"get_interface_for_device({far!r}) is {found}")
        listed = interfaces.get_registered_device_interfaces()
        check(
            (name, interface) in listed,
            f"{name} missing from get_registered_device_interfaces()",
        )
    return f"{far!r} resolves to the {name} interface; listed by get_registered_device_interfaces"
