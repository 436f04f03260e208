"""Export: a checkpoint becomes a checksummed ONNX bundle.

Modules:

* ``assemble`` — bundle assembly: the graphs, the tokenizer, the manifest, the parity checks
* ``policy_graph`` — the scorer graph
* ``export_cli`` — ``edgejudge export``
"""
