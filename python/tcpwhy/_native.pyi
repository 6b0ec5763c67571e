# Types of the Rust extension module (python/src/lib.rs).

__version__: str

class TcpwhyError(Exception): ...

def flows_json(path: str, threads: int = 0) -> tuple[str, list[str]]: ...
def analyze_json(
    path: str,
    min_cost: str = "1ms",
    hosts: list[str] = ...,
    vantage: str = "auto",
    threads: int = 0,
) -> tuple[str, list[str]]: ...
def duration_ns(s: str) -> int: ...
