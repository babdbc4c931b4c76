"""LibCST code analysis: candidate sites, and their rendering as patch or instrumentation."""
