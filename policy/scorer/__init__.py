"""The candidate scorer: one network that scores every candidate action of a state.

Modules:

* ``model`` — the structured, memoryful scorer (bundle formats 2 and 3)
* ``attention`` — its multi-head attention and transformer block
* ``token_reader`` — its token-level reading of items for each candidate
* ``rows`` — a training batch's vectors as rows of one table, and the operations on them
* ``flat`` — the flat scorer of format-1 bundles
"""
