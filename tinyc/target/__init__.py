"""What the compiler knows about the device it compiles for (passes never import dpctl).

device_info   DeviceInfo: subgroup sizes, work-group and local-memory limits
"""
