// The agent; its code is CordondCLI (the installed one is the multi-call `cordon`, Sources/cordon-multicall).
import CordondCLI

await CordondProgram.main()
