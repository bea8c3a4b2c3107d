import { ErrorCodes, KinformerError } from '@kinformer/core';

/** What a transaction entry does (client-go's `TransactionType`). `Add` and `Update` are both upserts. */
export type TransactionType = 'Add' | 'Update' | 'Delete';

/** One entry of `store.transaction` (client-go's `Transaction`). */
export interface Transaction<T> {
  readonly type: TransactionType;
  readonly object: T;
}

/** One entry of `ThreadSafeStore.transaction`: a {@link Transaction} with its key (client-go's `ThreadSafeStoreTransaction`). */
export interface ThreadSafeStoreTransaction<T> extends Transaction<T> {
  readonly key: string;
}

/**
 * Thrown by a transaction some of whose entries were skipped because their key function or index
 * function threw (client-go's `TransactionError`, code `ERR_TRANSACTION`). Every other entry was
 * applied. `successfulIndices` are the positions (in the caller's array, ascending) of the entries
 * applied; `errors` holds one error per skipped entry, in order.
 */
export class TransactionError extends KinformerError {
  readonly successfulIndices: readonly number[];
  readonly totalTransactions: number;
  readonly errors: readonly unknown[];

  constructor(successfulIndices: readonly number[], totalTransactions: number, errors: readonly unknown[]) {
    super(
      ErrorCodes.TRANSACTION,
      `failed to execute (${totalTransactions - successfulIndices.length}/${totalTransactions}) transactions failed due to: ${errors.map(describe).join('; ')}`,
      {
        ...(errors.length === 0 ? {} : { cause: errors[0] }),
        details: { successfulIndices, totalTransactions },
      },
    );
    this.successfulIndices = successfulIndices;
    this.totalTransactions = totalTransactions;
    this.errors = errors;
  }
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
