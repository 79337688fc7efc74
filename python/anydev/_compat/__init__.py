"""The legacy surface as data and as forwarders: the compat table (``table``,
generated from compat_map/), the deprecation wording (``messages``), the
legacy signatures (``signature``), the forwarders that the generated shim
modules are made of (``shims``: counted, warned once per call site, policy
per module), anydev's answers to the device-specific calls PyTorch keeps
(``kept``) and the deprecated ``torch.accelerator`` aliases
(``legacy_accelerator``). Its public faces are ``anydev.compat`` (policy,
warnings), ``anydev.report`` (the runtime report) and the shim modules
``anydev.cuda`` and ``anydev.xpu``.

A forwarder reaches the runtime through ``anydev._C``, or imports its target
by the dotted name the table gives (``anydev.accelerator.current_device_index``)
on its first call: this layer never imports the runtime's modules, so the
runtime can offer legacy aliases built here.

May import: common, the native extensions.
"""
