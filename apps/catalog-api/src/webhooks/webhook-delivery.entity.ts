import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * The outbox: one message of one trail entry to one subscription. Per subscription and subject
 * only the earliest undelivered message is sent, so a subject's messages arrive in trail order;
 * `dead` after the retry schedule is spent (the dead-letter list an admin replays).
 */
@Entity({ name: 'webhook_deliveries' })
@Index('UQ_webhook_deliveries_subscription_seq', ['subscriptionId', 'seq'], { unique: true })
@Index('IDX_webhook_deliveries_pending', ['subscriptionId', 'subject', 'seq'], {
  where: `"state" = 'pending'`,
})
export class WebhookDelivery {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id!: string;

  @Column({ name: 'subscription_id', type: 'int' })
  subscriptionId!: number;

  /** The trail entry (audit_log.id). */
  @Column({ type: 'bigint' })
  seq!: string;

  /** `<object type>:<object id>`: what ordering is kept for. */
  @Column({ type: 'varchar', length: 320 })
  subject!: string;

  /** `pending`, `delivered` or `dead`. */
  @Column({ type: 'varchar', length: 16, default: 'pending' })
  state!: string;

  @Column({ type: 'int', default: 0 })
  attempts!: number;

  @Column({ name: 'next_attempt_at', type: 'timestamptz', default: () => 'now()' })
  nextAttemptAt!: Date;

  /** Taken by a sender until then (another replica leaves it alone). */
  @Column({ name: 'lease_until', type: 'timestamptz', nullable: true })
  leaseUntil!: Date | null;

  @Column({ name: 'last_error', type: 'varchar', length: 500, nullable: true })
  lastError!: string | null;

  @Column({ name: 'delivered_at', type: 'timestamptz', nullable: true })
  deliveredAt!: Date | null;
}
