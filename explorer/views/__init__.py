"""What the pages show, built from a Trace: pure functions with no Streamlit (figures, the
backward animation, exports, the notebook view, permalinks and each page's own logic)."""
