from tests._rpc._procs import no_process_left

__all__ = ["no_process_left"]
