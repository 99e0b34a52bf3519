import { EntitySubscriberInterface, EventSubscriber, TransactionStartEvent } from 'typeorm';
import { limitTransactionStatements } from './database.repository';

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- TypeORM's own type for subscriber classes
const subscribers = new Map<number, Function>();

/**
 * The TypeORM subscriber class that limits the statements of every transaction to `ms`
 * (`SET LOCAL`, which ends with the transaction): behind a pooler in transaction mode, the only
 * scope a setting of ours may have. One class per limit, so repeated data sources reuse it.
 */
// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- as above
export function transactionStatementLimit(ms: number): Function {
  let subscriber = subscribers.get(ms);
  if (subscriber === undefined) {
    @EventSubscriber()
    class TransactionStatementLimit implements EntitySubscriberInterface {
      async afterTransactionStart(event: TransactionStartEvent): Promise<void> {
        await limitTransactionStatements(event.queryRunner, ms);
      }
    }
    subscriber = TransactionStatementLimit;
    subscribers.set(ms, subscriber);
  }
  return subscriber;
}
