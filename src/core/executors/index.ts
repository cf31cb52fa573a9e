// The execution handlers this node offers, by command. A command missing here answers
// service_unavailable and CAPS marks it `offered: false`.
import type { ExecutionCommand } from '../../protocol/services.ts';
import { attestEvent } from './attest-event.ts';
import { makeBct, verifyBct } from './bct.ts';
import { bvmExec } from './bvm-exec.ts';
import { getPulse } from './get-pulse.ts';
import { sealedMessage } from './sealed-message.ts';
import { timestampProof } from './timestamp-proof.ts';
import { machineEventLog } from './machine-event-log.ts';
import { submitId } from './submit-id.ts';
import type { Executor } from './types.ts';
import { verifyResult } from './verify-result.ts';

export const EXECUTORS: Partial<Record<ExecutionCommand, Executor>> = {
  GET_PULSE: getPulse,
  MAKE_BCT: makeBct,
  VERIFY_BCT: verifyBct,
  VERIFY_RESULT: verifyResult,
  ATTEST_EVENT: attestEvent,
  SUBMIT_ID: submitId,
  BVM_EXEC: bvmExec,
  SEALED_MESSAGE: sealedMessage,
  TIMESTAMP_PROOF: timestampProof,
  MACHINE_EVENT_LOG: machineEventLog,
};

export type { ExecutionArgs, Executor, Outcome } from './types.ts';
