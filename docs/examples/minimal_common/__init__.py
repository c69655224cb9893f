"""What mhost and mgpu share: the device module's functions (``device``), the
host-class DeviceInterface (``interface``) and the lines the generated wrapper
writes for either device (``inductor``)."""
