// libopenvx.so is the whole of ferry_graph_core (the object model, the entry
// points, the kernels and the runtime), linked as one archive so that the unit
// tests can link the same code statically; a shared library needs a source of
// its own, and this is it.
