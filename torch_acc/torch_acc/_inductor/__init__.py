"""acc's Inductor backend: scheduling, wrapper codegen, op overrides, options.

Importing this package imports Inductor; it is loaded only when acc is
registered for compilation (see :mod:`torch_acc.registration`).
"""
