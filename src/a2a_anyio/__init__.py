"""a2a-anyio: an A2A protocol client for asyncio and trio."""
