package benchstat

import "math"

// normalQuantile is the p-quantile of the standard normal distribution.
func normalQuantile(p float64) float64 {
	return math.Sqrt2 * math.Erfinv(2*p-1)
}

// studentTQuantile is the p-quantile of Student's t distribution with df
// degrees of freedom (df ≥ 1), found by bisection on its distribution
// function; the normal quantile when df is infinite.
func studentTQuantile(p float64, df int) float64 {
	switch {
	case math.IsNaN(p) || p <= 0 || p >= 1 || df < 1:
		return math.NaN()
	case p == 0.5:
		return 0
	case p < 0.5:
		return -studentTQuantile(1-p, df)
	}
	// The t quantile lies above the normal one; double up to a bound.
	lo, hi := 0.0, max(1, normalQuantile(p))
	for studentTCDF(hi, df) < p {
		lo, hi = hi, 2*hi
	}
	for range 200 {
		mid := (lo + hi) / 2
		if studentTCDF(mid, df) < p {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo <= 1e-12*hi {
			break
		}
	}
	return (lo + hi) / 2
}

// studentTCDF is P(T ≤ t) for Student's t with df degrees of freedom:
// 1 − I_x(df/2, 1/2)/2 at x = df/(df+t²) for t ≥ 0, symmetric below.
func studentTCDF(t float64, df int) float64 {
	v := float64(df)
	tail := 0.5 * regIncBeta(v/2, 0.5, v/(v+t*t))
	if t >= 0 {
		return 1 - tail
	}
	return tail
}

// regIncBeta is the regularised incomplete beta function I_x(a, b), from
// its continued fraction (evaluated by the modified Lentz method) on the
// side of x where it converges fast.
func regIncBeta(a, b, x float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	front := math.Exp(lab - la - lb + a*math.Log(x) + b*math.Log1p(-x))
	if x < (a+1)/(a+b+2) {
		return front * betaFraction(a, b, x) / a
	}
	return 1 - front*betaFraction(b, a, 1-x)/b
}

// betaFraction is the continued fraction of the incomplete beta function.
func betaFraction(a, b, x float64) float64 {
	const tiny, eps = 1e-300, 1e-15
	c, d := 1.0, 1-(a+b)*x/(a+1)
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1; m <= 500; m++ {
		mf := float64(m)
		for _, num := range []float64{
			mf * (b - mf) * x / ((a + 2*mf - 1) * (a + 2*mf)),
			-(a + mf) * (a + b + mf) * x / ((a + 2*mf) * (a + 2*mf + 1)),
		} {
			d = 1 + num*d
			if math.Abs(d) < tiny {
				d = tiny
			}
			c = 1 + num/c
			if math.Abs(c) < tiny {
				c = tiny
			}
			d = 1 / d
			h *= d * c
		}
		if math.Abs(d*c-1) < eps {
			break
		}
	}
	return h
}
