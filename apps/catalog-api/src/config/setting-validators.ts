import {
  ValidatorConstraint,
  ValidatorConstraintInterface,
  ValidationArguments,
} from 'class-validator';
import { validateCronExpression } from 'cron';
import { IpAllowList } from '@app/auth';

/** A comma list of addresses and CIDR ranges, or `*`, as IpAllowList reads it. */
@ValidatorConstraint({ name: 'ipAllowList' })
export class IsIpAllowList implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    if (typeof value !== 'string') return false;
    try {
      IpAllowList.parse(value);
      return true;
    } catch {
      return false;
    }
  }

  defaultMessage(args: ValidationArguments): string {
    return `${args.property} must be a comma list of IP addresses, CIDR ranges or *`;
  }
}

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
