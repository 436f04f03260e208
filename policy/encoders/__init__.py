"""Text encoders: what turns the policy's texts into vectors, at training time and in the bundle.

Modules:

* ``features`` — sentence embeddings with an on-disk cache, for any encoder reference
* ``static`` — the static encoder kind: a token-embedding table distilled from a transformer
* ``minilm_graph`` — the MiniLM (transformer) encoder graph and its parity check
* ``int8`` — the opt-in int8 encoder
* ``onnx_common`` — what the exporters share: opset, error type, a one-thread session, parity texts
"""
