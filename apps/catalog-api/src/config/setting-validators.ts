import {
  ValidatorConstraint,
  ValidatorConstraintInterface,
  ValidationArguments,
} from 'class-validator';
import { validateCronExpression } from 'cron';

/** A five- or six-field cron expression, or `off`. */
@ValidatorConstraint({ name: 'cronOrOff' })
export class IsCronOrOff implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    if (typeof value !== 'string') return false;
    return value.trim() === 'off' || validateCronExpression(value.trim()).valid;
  }

  defaultMessage(args: ValidationArguments): string {
    return `${args.property} must be a cron expression (e.g. "0 2 * * *") or off`;
  }
}
