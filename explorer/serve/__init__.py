"""How the app is served: hosted mode's settings, the per-session rate limit, and the
`autograd-explorer` command that starts Streamlit."""
