import { describe, expect, it } from 'vitest';
import { decode, exportXml, ofKind } from './exportFixtures.js';

/** Contracts §13 / issue 21: Workout elements in the old attributes and in the iOS 16+ shape with WorkoutStatistics. */

const d = (hms: string) => `2023-06-01 ${hms} -0700`;

describe('apple-health: workouts', () => {
  it('old attributes: duration, total distance and energy with their units, an inline route of Locations', async () => {
    const { records, rejected } = await decode(
      exportXml(
        ` <Workout workoutActivityType="HKWorkoutActivityTypeCycling" duration="61.5" durationUnit="min" totalDistance="12.5" totalDistanceUnit="mi" totalEnergyBurned="2000" totalEnergyBurnedUnit="kJ" sourceName="Bike App" startDate="${d('07:00:00')}" endDate="${d('08:01:30')}">
  <WorkoutRoute sourceName="Phone" startDate="${d('07:00:00')}" endDate="${d('08:01:30')}">
   <Location date="${d('07:00:05')}" latitude="37.77" longitude="-122.42" altitude="21.2" horizontalAccuracy="2.4" verticalAccuracy="-1" course="-1" speed="5.5"/>
   <Location date="${d('07:00:06')}" latitude="37.7701" longitude="-122.4201" altitude="21.3" horizontalAccuracy="2.4" verticalAccuracy="1.6" course="45" speed="5.6"/>
   <Location date="not a date" latitude="37.7702" longitude="-122.4202" altitude="21.3" horizontalAccuracy="2.4" verticalAccuracy="1.6" course="45" speed="5.6"/>
  </WorkoutRoute>
 </Workout>`,
      ),
    );
    expect(rejected).toEqual([]);
    const [w] = ofKind(records, 'workout');
    expect(w).toMatchObject({ type: 'cycling', duration_s: 3690, start_date: '2023-06-01T14:00:00.000Z' });
    expect(w!.distance_m).toBeCloseTo(20116.8, 1);
    expect(w!.active_energy_kcal).toBeCloseTo(478.01, 2);
    expect(w!.route).toHaveLength(2);
    // CLLocation's negatives: unknown course and vertical accuracy (then no altitude).
    expect(w!.route[0]).toMatchObject({ course_deg: null, altitude_m: null, speed_mps: 5.5 });
    expect(w!.metadata.route_points_dropped).toBe(1);
  });

  it('iOS 16+: statistics give distance, energy, heart rate and steps; events and activities kept in metadata', async () => {
    const stat = (type: string, attrs: string, unit: string) => `  <WorkoutStatistics type="HKQuantityTypeIdentifier${type}" startDate="${d('07:00:00')}" endDate="${d('07:30:00')}" ${attrs} unit="${unit}"/>`;
    const { records, rejected } = await decode(
      exportXml(
        ` <Workout workoutActivityType="HKWorkoutActivityTypeTraditionalStrengthTraining" duration="30" durationUnit="min" sourceName="Test Watch" startDate="${d('07:00:00')}" endDate="${d('07:30:00')}">
  <MetadataEntry key="HKAverageMETs" value="5.1 kcal/hr·kg"/>
  <WorkoutEvent type="HKWorkoutEventTypeSegment" date="${d('07:00:00')}" duration="10" durationUnit="min"/>
  <WorkoutEvent type="HKWorkoutEventTypePause" date="${d('07:10:00')}"/>
  <WorkoutActivity uuid="A1" startDate="${d('07:00:00')}" endDate="${d('07:30:00')}" duration="30" durationUnit="min">
${stat('HeartRate', 'average="99" minimum="70" maximum="120"', 'count/min')}
  </WorkoutActivity>
${stat('ActiveEnergyBurned', 'sum="210.5"', 'kcal')}
${stat('DistanceWalkingRunning', 'sum="0.5"', 'km')}
${stat('HeartRate', 'average="101.5" minimum="70" maximum="133"', 'count/min')}
${stat('StepCount', 'sum="420"', 'count')}
${stat('RunningPower', 'average="200"', 'W')}
 </Workout>`,
      ),
    );
    expect(rejected).toEqual([]);
    const [w] = ofKind(records, 'workout');
    expect(w).toMatchObject({ type: 'strength_training', duration_s: 1800, active_energy_kcal: 210.5, distance_m: 500, avg_heart_rate: 101.5, max_heart_rate: 133, steps: 420, route: [] });
    expect(w!.metadata).toMatchObject({
      HKAverageMETs: '5.1 kcal/hr·kg',
      original_activity_type: 'HKWorkoutActivityTypeTraditionalStrengthTraining',
      events: [
        { type: 'segment', date: '2023-06-01T14:00:00.000Z', duration_s: 600 },
        { type: 'pause', date: '2023-06-01T14:10:00.000Z' },
      ],
      activities: [{ uuid: 'A1', start_date: '2023-06-01T14:00:00.000Z', end_date: '2023-06-01T14:30:00.000Z', duration_s: 1800 }],
    });
  });

  it('a workout whose dates cannot be read is rejected at its line', async () => {
    const { rejected } = await decode(exportXml(` <Workout workoutActivityType="HKWorkoutActivityTypeRunning" sourceName="W" startDate="yesterday" endDate="${d('07:30:00')}"/>`));
    expect(rejected.map((r) => r.reason)).toEqual(['start_date is not a date-time with a time zone']);
    expect(rejected[0]!.location).toMatch(/^export\.xml:\d+$/);
  });
});
