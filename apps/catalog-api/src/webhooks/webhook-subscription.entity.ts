import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/**
 * A receiver of the trail's events as Standard Webhooks messages. `cursor` is the last trail
 * position fanned out to it: a new subscription starts at the head of the trail when created.
 */
@Entity({ name: 'webhook_subscriptions' })
export class WebhookSubscription {
  @PrimaryGeneratedColumn()
  id!: number;

  @Column({ type: 'varchar', length: 2000 })
  url!: string;

  /** Event types (`access.grant`, ...) it receives; null: every one. */
  @Column({ type: 'varchar', length: 64, array: true, nullable: true })
  events!: string[] | null;

  /**
   * The signing secret (`whsec_` + base64), kept as is: HMAC needs it. Shown once, when
   * created; never in a listing, a log or the trail.
   */
  @Column({ type: 'varchar', length: 200 })
  secret!: string;

  @Column({ type: 'bigint' })
  cursor!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
