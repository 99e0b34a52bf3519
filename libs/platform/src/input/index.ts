export { InputProperty, Refused, refuse } from './input-property.decorator';
export {
  BooleanParam,
  FieldsParam,
  MAX_INT,
  OneOfParam,
  PathTextParam,
  PatternParam,
  PositiveIntParam,
  TextParam,
  UUID_PATTERN,
  UuidParam,
} from './query-params.decorator';
export {
  BooleanField,
  IdOrNameField,
  IntegerField,
  OneOfField,
  TextField,
  TextListField,
} from './body-fields.decorator';
export type { TextOptions } from './body-fields.decorator';
