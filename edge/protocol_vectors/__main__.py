"""``python -m edge.protocol_vectors``: rewrite vectors.txt from the Python implementation."""

from edge.protocol_vectors import VECTORS_FILE, render

VECTORS_FILE.write_text(render())
print(f"wrote {VECTORS_FILE}")
