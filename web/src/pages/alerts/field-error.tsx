// A refusal shown next to the field it names (model.ts fieldOf), or above the buttons when it
// names none of the form's fields.
import type { JSX } from 'preact';
import { describeError } from '../../api/errors';
import { PlanErrorNote } from '../../components/quota-error';
import { fieldOf } from './model';

/** The message under field `name` when `error` is about it (its id for aria-describedby). */
export function FieldError(props: { error: unknown; name: string }): JSX.Element | null {
  if (props.error === undefined || fieldOf(props.error) !== props.name) return null;
  return (
    <span class="note error small field-error" id={`${props.name}-error`} role="alert" data-testid={`${props.name}-error`}>
      {describeError(props.error)}
    </span>
  );
}

/** Attributes of an input whose field the error is about. */
export function invalid(error: unknown, name: string): { 'aria-invalid'?: 'true'; 'aria-describedby'?: string } {
  return error !== undefined && fieldOf(error) === name ? { 'aria-invalid': 'true', 'aria-describedby': `${name}-error` } : {};
}

/** The error when it is about none of `fields` (shown once, above the buttons); the plan's monitor cap (402) with its numbers. */
export function OtherError(props: { error: unknown; fields: string[] }): JSX.Element | null {
  if (props.error === undefined || props.fields.includes(fieldOf(props.error))) return null;
  return <PlanErrorNote error={props.error} />;
}
