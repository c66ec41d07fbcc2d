from typing import List, Tuple

__version__: str

def run(args: List[str]) -> Tuple[int, str, str]: ...
