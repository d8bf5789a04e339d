from typing import Any
async def events_benchmarks(ctx: Any) -> list[Any]:
    return []
