// The command line; its code is CordonCLI (the installed one is the multi-call `cordon`, Sources/cordon-multicall).
import CordonCLI

await CordonProgram.main()
