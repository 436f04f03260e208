"""`make demo`'s summary (tools/demo/demo.sh runs the pipeline)."""
