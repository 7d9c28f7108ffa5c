"""The Ferry platform as pyopencl sees it: named Ferry, offering the native devices."""

from conftest import served_extensions


def test_ferry_platform_offers_the_native_devices(ferry_platform, native_platform):
    assert ferry_platform.name == "Ferry"
    assert "cl_ferry_remote" in ferry_platform.extensions.split()
    ferry = sorted(d.name for d in ferry_platform.get_devices())
    native = sorted(d.name for d in native_platform.get_devices())
    assert ferry == native


def test_device_properties_match_native(cl, ferry_device, native_platform):
    native = next(d for d in native_platform.get_devices() if d.name == ferry_device.name)
    for attribute in (
        "vendor",
        "type",
        "max_compute_units",
        "global_mem_size",
        "local_mem_size",
        "max_mem_alloc_size",
        "max_work_group_size",
        "max_work_item_sizes",
        "address_bits",
    ):
        assert getattr(ferry_device, attribute) == getattr(native, attribute), attribute
    # The native extensions, less host-API ones Ferry does not forward.
    assert sorted(ferry_device.extensions.split()) == served_extensions(native.extensions)
    assert ferry_device.platform.name == "Ferry"
