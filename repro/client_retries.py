"""The SDKs' own retries (a 429 / 529 / timeout, then 200) inside one call: one span, but before the fix the span
said nothing of the attempts the SDK sent again (run: each span's events)."""
import runpy, os
runpy.run_path(os.path.join(os.path.dirname(__file__), "clients_explore.py"))
