import CordonProtocol
import Foundation
import Testing

@testable import CordonRun

/// `WrappedProgram` with real child processes, frozen with signals (no cgroup): exit codes as
/// `cordon run` returns them, the environment it is given, and the forwarding rule that a second
/// SIGINT or SIGTERM to a frozen program kills it (docs/ARCHITECTURE.md, "Freezing").
@Suite struct WrappedProgramTests {
    @Test func itsExitCodeIsReturned() async throws {
        let program = try WrappedProgram(arguments: ["/bin/sh", "-c", "exit 3"], environment: [:])
        #expect(await program.waitForExit() == 3)
    }

    @Test func aSignalThatEndsItIs128PlusItsNumber() async throws {
        let program = try WrappedProgram(arguments: ["/bin/sh", "-c", "kill -TERM $$"], environment: [:])
        #expect(await program.waitForExit() == 128 + SIGTERM)
    }

    @Test func itGetsTheEnvironmentItIsGivenAndNoMore() async throws {
        setenv("CORDON_RUN_TEST_INHERITED", "1", 1)
        let program = try WrappedProgram(
            arguments: [
                "/bin/sh", "-c", #"[ "$CORDON_APP_ID" = com.example.notes ] && [ -z "$CORDON_RUN_TEST_INHERITED" ]"#,
            ],
            environment: ["CORDON_APP_ID": "com.example.notes"])
        #expect(await program.waitForExit() == 0)
    }

    @Test func aSecondInterruptWhileFrozenKillsIt() async throws {
        let program = try WrappedProgram(arguments: ["/bin/sh", "-c", "exec sleep 600"], environment: [:])
        program.freeze()
        #expect(program.isFrozen)
        // SIGSTOP is sent, not yet acted on: a SIGINT pending with it would be taken first. Wait
        // (without reaping) until the program is stopped, as a user's second Ctrl-C comes later.
        var info = siginfo_t()
        while waitid(P_PID, id_t(program.pid), &info, WSTOPPED | WNOWAIT) < 0 && errno == EINTR {}
        let first = program.forward(SIGINT)
        #expect(first?.contains("frozen until the container unlocks") == true)
        #expect(program.forward(SIGINT) == "cordon: the program was frozen: killed it")
        #expect(await program.waitForExit() == 128 + SIGKILL)
        #expect(program.forward(SIGINT) == nil, "nothing is sent once it has exited")
    }

    @Test func aSignalToARunningProgramIsForwardedSilently() async throws {
        let program = try WrappedProgram(arguments: ["/bin/sh", "-c", "exec sleep 600"], environment: [:])
        program.freeze()
        program.thaw()
        #expect(!program.isFrozen)
        #expect(program.forward(SIGTERM) == nil)
        #expect(await program.waitForExit() == 128 + SIGTERM)
    }

    @Test func terminateKillsAFrozenProgram() async throws {
        let program = try WrappedProgram(arguments: ["/bin/sh", "-c", "exec sleep 600"], environment: [:])
        program.freeze()
        program.terminate()
        #expect(await program.waitForExit() == 128 + SIGKILL)
    }

    @Test func aProgramThatIsNotThereIsAUsageFailure() {
        #expect(
            throws: ErrorText(
                "cannot start cordon-no-such-program: No such file or directory",
                hint: "check the program's name and PATH",
                exit: .usage)
        ) {
            try WrappedProgram(arguments: ["cordon-no-such-program"], environment: ["PATH": "/usr/bin:/bin"])
        }
    }
}
