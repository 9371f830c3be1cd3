// The fleet service; its code is CordonFleetdCLI (the installed one is the multi-call `cordon`, Sources/cordon-multicall).
import CordonFleetdCLI

await CordonFleetdProgram.main()
